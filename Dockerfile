# Build stage: compile TypeScript with the dev dependencies, then drop them.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

# Runtime stage: production dependencies, compiled code, the default catalog and the
# prompt-injection detector's weights (found at models/ above dist/, loaded on first use).
FROM node:20-slim
ENV NODE_ENV=production PORT=3000
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
COPY models ./models
# The admin API's OpenAPI file, merged into /openapi.json at boot when present; the rest of
# docs/ stays out of the image (and out of the build context: .dockerignore).
COPY docs/admin-openapi.yaml ./docs/
# The node user (uid 1000) owns nothing in /app: code and catalog stay read-only to it.
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/ready').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
# What `npm start` execs after its build step. Exec form, so SIGTERM reaches Node (PID 1)
# and in-flight streams drain.
CMD ["node", "dist/main.js"]
