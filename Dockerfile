# syntax=docker/dockerfile:1
#
# Production image of the service, on Node 24 LTS (the base images' own node; package.json `engines`). Two stages:
#   build   - installs every dependency (dev ones included) and compiles TypeScript into dist/
#   runtime - production dependencies only (no embedded-postgres, no compilers) and the compiled dist/
#
# The container never migrates at start: a Job runs `node dist/cli.js migrate` with the same image first.
# Configuration comes from the environment (see .env.example); DATABASE_URL is required in production.

# ---------------------------------------------------------------------------------------------------------
FROM node:24-bookworm-slim AS build
WORKDIR /app

# Dependencies first, so this layer is cached until package.json or the lockfile changes. Install scripts are
# skipped: the build (tsc through the Nest CLI) needs none of them. That includes the `node` devDependency's,
# which would download a second Node 24 for machines whose own Node is older; without it the package links no
# `node` binary, so `npm run build` runs on the image's Node 24.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund

COPY . .
RUN npm run build

# ---------------------------------------------------------------------------------------------------------
FROM node:24-bookworm-slim AS runtime
# HOST: the service binds loopback unless told otherwise; in a container it must answer on every interface.
# MALLOC_*: glibc's malloc as the Kubernetes Deployments set it (docs/operations.md, "Memory"): two arenas, and
# the mmap and trim thresholds held at glibc's starting 128 KiB, so freed buffers go back to the system.
ENV NODE_ENV=production HOST=0.0.0.0 \
    MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072
WORKDIR /app

# Production dependencies only. No runtime dependency needs an install script (the only one with a script
# is @scarf/scarf, download analytics).
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    && npm cache clean --force

# The application files stay owned by root: the service never writes to /app.
COPY --from=build /app/dist ./dist

# The base image's `node` user, by number: Kubernetes' runAsNonRoot can only verify a numeric user.
USER 1000:1000
EXPOSE 3000

# Liveness only (/healthz checks no dependency); node's own fetch, as slim images have no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1)).catch(() => process.exit(1))"]

CMD ["node", "dist/main.js"]
