import { expect } from 'vitest';
import type { CrossTenantCase } from './types.js';

// A public IP literal: passes the URL rules without DNS and is never called by these cases.
const ENDPOINT = 'https://93.184.215.14/atrium-skill';

export const marketplaceCases: CrossTenantCase[] = [
  {
    name: 'assistant conversations',
    async setup(t, owner) {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/chat/conversations',
        token: owner.admin.token,
        payload: { content: 'Tenant A private question' },
      });
      expect(res.statusCode, res.body).toBe(201);
      return { conversation: res.json().conversation.id as string };
    },
    denied: ({ conversation }) => [
      { method: 'GET', url: `/api/v1/chat/conversations/${conversation}` },
      { method: 'POST', url: `/api/v1/chat/conversations/${conversation}/messages`, payload: { content: 'hi' } },
      { method: 'DELETE', url: `/api/v1/chat/conversations/${conversation}` },
    ],
    lists: () => [{ method: 'GET', url: '/api/v1/chat/conversations' }],
    unchanged: ({ conversation }) => [{ method: 'GET', url: `/api/v1/chat/conversations/${conversation}` }],
  },
  {
    name: 'marketplace private skills and installs',
    async setup(t, owner) {
      const slug = `ct-private-${Math.random().toString(36).slice(2, 8)}`;
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/marketplace/skills',
        token: owner.admin.token,
        payload: {
          manifest: {
            slug,
            name: 'Tenant A secret skill',
            summary: 'Only for A',
            description: 'Only for A',
            category: 'internal',
            version: '1.0.0',
            publisher: 'A',
            scopes: [{ scope: 'patients:read', reason: 'Reads patients' }],
            tools: [{ name: 'secret_tool', description: 'x', inputSchema: { type: 'object' }, requiredScopes: [] }],
          },
          endpoint: ENDPOINT,
        },
      });
      expect(res.statusCode, res.body).toBe(201);
      const install = await t.request({
        method: 'POST',
        url: '/api/v1/marketplace/install',
        token: owner.admin.token,
        payload: { slug, scopes: ['patients:read'] },
      });
      expect(install.statusCode, install.body).toBe(201);
      return { slug, skillId: res.json().skill.skillId };
    },
    denied: ({ slug }) => [
      { method: 'GET', url: `/api/v1/marketplace/module/${slug}` },
      { method: 'DELETE', url: `/api/v1/marketplace/skills/${slug}` },
      { method: 'POST', url: '/api/v1/marketplace/install', payload: { slug, scopes: [] } },
      { method: 'POST', url: '/api/v1/marketplace/uninstall', payload: { slug } },
      { method: 'POST', url: '/api/v1/skills/invoke', payload: { slug, tool: 'secret_tool', input: {} } },
      { method: 'GET', url: `/api/v1/skills/content?slug=${slug}` },
    ],
    lists: ({ slug }) => [
      { method: 'GET', url: '/api/v1/marketplace/catalog' },
      { method: 'GET', url: `/api/v1/marketplace/catalog?q=${slug}` },
      { method: 'GET', url: '/api/v1/marketplace/installed' },
      { method: 'GET', url: '/api/v1/marketplace/skills' },
      { method: 'GET', url: '/api/v1/skills/routing' },
    ],
    unchanged: ({ slug }) => [
      { method: 'GET', url: `/api/v1/marketplace/module/${slug}` },
      { method: 'GET', url: '/api/v1/marketplace/installed' },
    ],
  },
];
