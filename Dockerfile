# syntax=docker/dockerfile:1
# pgcp-exporter: multi-stage build on Node 24 LTS (slim). CI runs the same install, build and
# start steps outside Docker (.ci/production-smoke), since no Docker engine runs there.

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
# The build's own files (tools/*.ts): the bundle's options and plugins.
COPY tools/*.ts ./tools/
COPY src ./src
# Type-checks, then bundles src/ and its dependencies into dist/ (tools/bundle.ts).
RUN npm run build

FROM node:24-slim AS runtime
# The git commit the image is built from (the image has no .git): `--build-arg
# REVISION=$(git rev-parse HEAD)`; shown by --version and pgcp_build_info{revision}.
ARG REVISION=""
ENV NODE_ENV=production PGCP_BUILD_REVISION=${REVISION}
WORKDIR /app
# dist/ holds the dependencies it uses: no node_modules. (pino-pretty, for pretty terminal
# logs, is optional and left out: the image logs JSON lines.)
COPY package.json ./
COPY --from=build /app/dist ./dist
COPY config ./config
COPY dashboards ./dashboards
# State (checkpoints, counter totals, alert outbox) lives in a volume owned by the non-root user.
RUN mkdir -p /var/lib/pgcp-exporter && chown node:node /var/lib/pgcp-exporter
VOLUME ["/var/lib/pgcp-exporter"]
ENV PGCP_STATE_DIR=/var/lib/pgcp-exporter
USER node
EXPOSE 9642
# Follows PGCP_LISTEN (a listen address set only in a config file must be set there too).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "dist/healthcheck.js"]
# Two malloc arenas instead of up to eight per core: the threads of Node 24's V8 each kept
# freed memory in an arena of their own. Blocks of 128 KiB and more (a /metrics body, the
# buffers of a rendering) mapped on their own and given back when freed, where glibc would
# raise that size to the largest block freed so far and keep the later ones in its heap
# (docs/performance.md, memory).
ENV MALLOC_ARENA_MAX=2
ENV MALLOC_MMAP_THRESHOLD_=131072
# Node handles SIGTERM and SIGINT itself as PID 1; `docker run --init` adds a minimal init
# that also reaps any child process. --max-semi-space-size=8 keeps V8's young generation at
# 16 MiB instead of up to 32, and --liftoff-only compiles the HTTP client's WebAssembly parser
# once, with V8's baseline compiler (docs/performance.md, memory); Node 24 takes both only at
# its start.
ENTRYPOINT ["node", "--max-semi-space-size=8", "--liftoff-only", "dist/cli.js"]
CMD ["run"]
