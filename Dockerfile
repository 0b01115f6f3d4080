# The cni-repair controller image: compiled JavaScript and production dependencies on Node 24, run as non-root.
# Build: docker build -t <registry>/cni-repair:<tag> .   (then set that reference in manifests/base/kustomization.yaml)

# 1. Compile: every dependency (TypeScript is a dev dependency), then only src/ into dist/src.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY src ./src
RUN npx tsc -p tsconfig.json

# 2. Production dependencies only, in a clean tree.
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# 3. Runtime: package.json (the version is read from it), production node_modules, dist/src. No npm run, no shell
#    entry point: node is PID 1 and receives SIGTERM itself for the graceful shutdown.
FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
# A numeric user, so Kubernetes can verify runAsNonRoot (the manifests run as 65532 too).
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["node", "dist/src/cli/main.js"]
