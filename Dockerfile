# Glimpse API / worker image: Node 24 LTS on Debian 12 with the distribution's headless shell (the
# default capture browser), full Chromium (selectable with CHROMIUM_PATH), ffmpeg and CJK/emoji fonts
# from apt (no browser download). One image, two commands: `node dist/main.js` (API, the default) and
# `node dist/worker.js` (queue processors). `docker build -t glimpse .`
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini chromium-headless-shell chromium ffmpeg \
      fonts-noto-cjk fonts-noto-color-emoji fonts-liberation ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# CHROMIUM_SANDBOX=on (also the default): Chromium runs sandboxed, or the worker takes no work (docs/security.md).
ENV NODE_ENV=production \
    CHROMIUM_PATH=/usr/bin/chromium-headless-shell \
    CHROMIUM_SANDBOX=on \
    STORAGE_DIR=/data/files \
    PORT=3000 \
    WORKER_HEALTH_PORT=3001 \
    LOG_FORMAT=json
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# EasyList / EasyPrivacy for blockAds and blockTrackers (read at run time, never downloaded).
COPY vendor ./vendor
COPY package.json ./
# Non-root: the image's `node` user (uid 1000) owns only the results directory. Chromium refuses its
# sandbox as root; as `node` it needs unprivileged user namespaces from the host and the container's
# seccomp profile (docker-compose.yml, deploy/seccomp/chromium.json; docs/operations.md).
RUN mkdir -p /data/files && chown -R node:node /data
USER node
EXPOSE 3000 3001
# Liveness: /health on the API port or, in a worker container, on WORKER_HEALTH_PORT.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["node", "dist/health/healthcheck.js"]
# tini is PID 1: it forwards SIGTERM to node (exec form, no shell in between) and reaps the browser's
# child processes, so the graceful drain runs on `docker stop` and Kubernetes pod termination.
ENTRYPOINT ["/usr/bin/tini", "--"]
# The API applies pending migrations at start under a PostgreSQL advisory lock (MIGRATE_ON_START);
# compose and the Helm chart run them once beforehand instead.
CMD ["node", "dist/main.js"]
