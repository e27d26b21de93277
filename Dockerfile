# syntax=docker/dockerfile:1
# Stepwise: the REST API and the workers share this image.
#   docker build -t stepwise .
#   docker run -e REDIS_URL=redis://redis:6379 -e STEPWISE_API_KEYS=admin:admin:<secret> -p 8080:8080 stepwise
# The default command is `stepwise serve` (API and worker in one process);
# `stepwise serve --no-worker` and `stepwise worker` split them (see docker-compose.yml).

# --- build: bundle the service into dist/ (scripts/build.ts), the web console into console/dist/
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# `prepare` builds, which needs the sources: install first without scripts (cached
# layer while the lockfile is unchanged), then build explicitly.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.ts ./scripts/build.ts
COPY schema ./schema
COPY engine ./engine
COPY runtime ./runtime
COPY api ./api
COPY task-runners ./task-runners
COPY cli ./cli
COPY config ./config
RUN npm run build
# The console (Preact, bundled by esbuild, a dev dependency): served at /console/, so
# the image needs no network at run time. esbuild's binary comes from its platform
# package, which --ignore-scripts still installs.
COPY console ./console
RUN npm run build:console

# --- runtime: production dependencies and dist/ only -------------------------------------
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    STEPWISE_LOG_LEVEL=info
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would run the build, whose tools are dev dependencies.
# dist/ holds the dependencies bundled in; node_modules stays for msgpackr-extract's
# native addon (scripts/build.ts), which loads from its package.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# Found by api/plugins/console.ts from dist/cli/ (../../console/dist).
COPY --from=build /app/console/dist ./console/dist
COPY bin ./bin
COPY definitions ./definitions
# The official image's unprivileged user (uid 1000); nothing here needs root.
USER node
EXPOSE 8080
# /health answers 200 only while Redis answers. Without API keys the API binds to
# 127.0.0.1, which this in-container probe still reaches.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# A 64 MB young generation (V8's default: 16): a worker allocates tens of KB per
# transition that die within milliseconds, and with 16 MB a burst of 50,000 fired
# timers spent a quarter of the worker's CPU copying the transitions in flight
# (issue 21; README, "Running the service").
ENTRYPOINT ["node", "--max-semi-space-size=64", "bin/stepwise.js"]
CMD ["serve"]
