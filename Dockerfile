# Node 22 or later: Node 20 is past its end of life (the code itself still runs on 20).
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm ci && npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY migrations ./migrations
COPY web ./web
USER node
EXPOSE 8080 9464
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["start"]
