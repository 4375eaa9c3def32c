import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const apiServer = 'http://127.0.0.1:3000';

// Vite requires a default export for its config file.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
  },
  server: {
    proxy: {
      '/api': apiServer,
      '/_emulators': apiServer,
      '/docs': apiServer,
    },
  },
});
