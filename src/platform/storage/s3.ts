// Object storage over the S3 API (AWS S3, MinIO, R2…): path-style URLs, requests signed with
// Signature Version 4 by aws4fetch, through platform/upstream (timeouts; retries for the idempotent
// PUT/GET/DELETE).
import { AwsV4Signer } from 'aws4fetch';
import { createUpstream } from '../upstream/index.js';
import type { ObjectStore } from './store.js';

export interface S3Settings {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

const upstream = createUpstream({
  name: 'storage:s3',
  timeoutMs: 15_000,
  retries: 2,
  maxResponseBytes: 64 * 1024 * 1024,
});

export function s3ObjectStore(settings: S3Settings): ObjectStore {
  const urlOf = (key: string) =>
    `${settings.endpoint}/${settings.bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
  const call = async (method: 'PUT' | 'GET' | 'DELETE', key: string, body?: Buffer) => {
    const signed = await new AwsV4Signer({
      method,
      url: urlOf(key),
      headers: body ? { 'content-type': 'application/octet-stream' } : undefined,
      body: body ? new Uint8Array(body) : undefined,
      accessKeyId: settings.accessKeyId,
      secretAccessKey: settings.secretAccessKey,
      service: 's3',
      region: settings.region,
    }).sign();
    return upstream.request({
      method,
      url: signed.url.toString(),
      headers: Object.fromEntries(signed.headers.entries()),
      body,
      idempotent: true,
    });
  };
  const failed = (what: string, status: number, text: string) =>
    new Error(`S3 ${what} failed with ${status}: ${/<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? 'no code'}`);
  return {
    async put(key, body) {
      const res = await call('PUT', key, body);
      if (!res.ok) throw failed('PUT', res.status, res.text());
    },
    async get(key) {
      const res = await call('GET', key);
      if (res.status === 404) return undefined;
      if (!res.ok) throw failed('GET', res.status, res.text());
      return res.body;
    },
    async delete(key) {
      const res = await call('DELETE', key);
      if (!res.ok && res.status !== 404) throw failed('DELETE', res.status, res.text());
    },
  };
}
