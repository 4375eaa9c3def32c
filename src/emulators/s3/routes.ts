// S3 emulator: path-style `PUT|GET|DELETE /<bucket>/<key>`, every request's Signature Version 4
// checked (access key `atrium-local`, secret `atrium-local-secret`), S3's XML error bodies
// (`SignatureDoesNotMatch`, `NoSuchKey`), objects kept in the database. Fault operations `put`, `get`.
import { AwsV4Signer } from 'aws4fetch';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readDoc, updateDoc } from '../calendar/store.js';
import { applyFault, FaultBook, registerFaultRoutes } from '../faults.js';

export const S3_EMULATOR_CREDENTIALS = { accessKeyId: 'atrium-local', secretAccessKey: 'atrium-local-secret' };

const xmlError = (reply: FastifyReply, status: number, code: string, message: string) =>
  reply
    .status(status)
    .type('application/xml')
    .send(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`);

/** Re-signs the request as the client should have and compares the Authorization header. */
async function signatureMatches(request: FastifyRequest, url: string, body: Buffer | undefined): Promise<boolean> {
  const given = String(request.headers.authorization ?? '');
  const datetime = String(request.headers['x-amz-date'] ?? '');
  const region = /Credential=[^/]+\/\d{8}\/([^/]+)\/s3\//.exec(given)?.[1];
  if (!given.startsWith('AWS4-HMAC-SHA256 ') || !/^\d{8}T\d{6}Z$/.test(datetime) || !region) return false;
  if (!given.includes(`Credential=${S3_EMULATOR_CREDENTIALS.accessKeyId}/`)) return false;
  const contentType = request.headers['content-type'];
  const signed = await new AwsV4Signer({
    method: request.method,
    url,
    headers: contentType ? { 'content-type': String(contentType) } : undefined,
    body: body?.length ? new Uint8Array(body) : undefined,
    ...S3_EMULATOR_CREDENTIALS,
    service: 's3',
    region,
    datetime,
  }).sign();
  return signed.headers.get('authorization') === given;
}

export async function s3Emulator(fastify: FastifyInstance): Promise<void> {
  const faults = new FaultBook();
  registerFaultRoutes(fastify, faults);
  const db = () => fastify.atrium.db;

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const { bucket, '*': key } = request.params as { bucket: string; '*': string };
    const url = `${fastify.atrium.selfUrl()}${request.url}`;
    const body = Buffer.isBuffer(request.body) ? request.body : undefined;
    if (!(await signatureMatches(request, url, body))) {
      return xmlError(
        reply,
        403,
        'SignatureDoesNotMatch',
        'The request signature we calculated does not match the signature you provided.',
      );
    }
    const docKey = `object:${bucket}/${key}`;
    if (request.method === 'PUT') {
      const f = await applyFault(faults, 'put');
      if (f) return xmlError(reply, f.status!, 'InternalError', 'We encountered an internal error. Please try again.');
      const data = (body ?? Buffer.alloc(0)).toString('base64');
      await updateDoc(
        db(),
        's3',
        docKey,
        () => ({ data }),
        (doc: { data: string }) => {
          doc.data = data;
        },
      );
      return reply.status(200).header('etag', `"${data.length}"`).send();
    }
    if (request.method === 'GET') {
      const f = await applyFault(faults, 'get');
      if (f) return xmlError(reply, f.status!, 'InternalError', 'We encountered an internal error. Please try again.');
      const doc = await readDoc<{ data: string | null }>(db(), 's3', docKey);
      if (!doc?.data) return xmlError(reply, 404, 'NoSuchKey', 'The specified key does not exist.');
      return reply.type('application/octet-stream').send(Buffer.from(doc.data, 'base64'));
    }
    await updateDoc(
      db(),
      's3',
      docKey,
      () => ({ data: null }),
      (doc: { data: string | null }) => {
        doc.data = null;
      },
    );
    return reply.status(204).send();
  };
  // Objects arrive as raw bytes, whatever their type (the fault routes above keep their JSON).
  await fastify.register(async (objects) => {
    objects.removeAllContentTypeParsers();
    objects.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 64 * 1024 * 1024 }, (_r, body, done) =>
      done(null, body),
    );
    for (const method of ['PUT', 'GET', 'DELETE'] as const) {
      objects.route({ method, url: '/:bucket/*', schema: { hide: true }, handler: handle });
    }
  });
}
