# Glimpse API / worker image: Debian with the distribution's headless shell (the default capture browser),
# full Chromium (selectable with CHROMIUM_PATH), ffmpeg and CJK/emoji fonts (no browser download).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium-headless-shell chromium ffmpeg fonts-noto-cjk fonts-noto-color-emoji fonts-liberation ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production CHROMIUM_PATH=/usr/bin/chromium-headless-shell STORAGE_DIR=/data/files PORT=3000
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
RUN mkdir -p /data/files && chown -R node:node /data
USER node
EXPOSE 3000
# API (runs migrations first); the worker service overrides the command with `node dist/worker.js`.
CMD ["sh", "-c", "node dist/database/run-migrations.js && node dist/main.js"]
