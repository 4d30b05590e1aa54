# syntax=docker/dockerfile:1
# gatesync daemon image. Build: docker build -t gatesync .
# Run:  docker run -v $PWD/gatesync.yaml:/etc/gatesync/gatesync.yaml:ro -e GW_ADMIN_KEY=... gatesync
# The config's server.listen must be 0.0.0.0:9464 inside a container (see examples/k8s).

# 1. Build: all dependencies, compile TypeScript and bundle it (scripts/bundle/), then keep
#    production dependencies only.
#    better-sqlite3 (the embedded state) compiles from source where no prebuilt binary can be
#    fetched: python3, make and g++ are needed here, not in the runtime image.
FROM node:20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# install scripts run only for the packages package.json allows (allowScripts: better-sqlite3);
# `prepare` (the build) runs below, once the sources are copied
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3 && node -e "require('better-sqlite3')"
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bin ./bin
COPY scripts/bundle ./scripts/bundle
# better-sqlite3 (the SQLite state's driver) is an optional peer dependency, listed for the
# repository's own installs among the development ones: the prune keeps it and what it loads
RUN npm run build \
 && mkdir /keep && mv node_modules/better-sqlite3 node_modules/bindings node_modules/file-uri-to-path /keep/ \
 && npm prune --omit=dev \
 && mv /keep/* node_modules/ && node -e "require('better-sqlite3')(':memory:').close()"

# 2. Runtime: git for the git source, no build tools, an unprivileged user.
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY schemas ./schemas
COPY ui ./ui
RUN mkdir -p /var/lib/gatesync && chown node:node /var/lib/gatesync
USER node
# young generation sized explicitly: under a container's memory limit (or any heap cap) V8 kept it at
# 2 MiB, and a first apply of 10,000 resources spent 4.8 times the CPU in scavenges (README, Performance); a manifest
# that sets NODE_OPTIONS replaces this, so it names the flag again (examples/k8s)
ENV NODE_ENV=production GATESYNC_LOG_FORMAT=json NODE_OPTIONS=--max-semi-space-size=16
WORKDIR /var/lib/gatesync
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/healthz').then(r=>{process.exitCode=r.ok?0:1}).catch(()=>{process.exitCode=1})"]
ENTRYPOINT ["node", "/app/bin/gatesync.js"]
CMD ["run", "--config", "/etc/gatesync/gatesync.yaml"]
