# The controller image for people who build with Docker: the same layout as `make image` (/usr/local/bin/node,
# /app/dist/src, /app/node_modules, user 65532, no shell), on distroless/cc, which carries the same Debian
# packages (glibc, libgcc, libstdc++, CA certificates, tzdata). `make image` is the reference build: pinned
# inputs, reproducible digest, amd64 + arm64 index, SBOM, and tested; this file is not built by the tests here.
# Build: docker build -t <registry>/cni-repair:<tag> .

# 1. Compile: every dependency (TypeScript is a dev dependency), then only src/ into dist/src.
FROM node:24.22.3-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY src ./src
RUN npx tsc -p tsconfig.json

# 2. Production dependencies only, in a clean tree.
FROM node:24.22.3-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# 3. Runtime: node is PID 1 and receives SIGTERM itself for the graceful shutdown.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /usr/local/bin/node /usr/local/bin/node
COPY --from=deps /app/node_modules /app/node_modules
COPY --from=build /app/dist/src /app/dist/src
# The controller reads its version from package.json.
COPY package.json /app/
ENV NODE_ENV=production PATH=/usr/local/bin
WORKDIR /app
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/node", "/app/dist/src/cli/main.js"]
