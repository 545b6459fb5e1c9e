# syntax=docker/dockerfile:1
# The image of one application, named by the MODULE build argument, listening on PORT. Build from the
# repository root (the build needs the parent pom and common/):
#   docker build --build-arg MODULE=order-api --build-arg PORT=8080 -t flashsale/order-api .
#   docker build --build-arg MODULE=order-worker --build-arg PORT=8081 -t flashsale/order-worker .

# Build stage: the same Maven invocation that produces the jar the tests use.
FROM eclipse-temurin:25-jdk AS build
ARG MODULE
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/root/.m2 set -eu; \
    : "${MODULE:?build with --build-arg MODULE=order-api or MODULE=order-worker}"; \
    ./mvnw -B -q -DskipTests -pl "$MODULE" -am package; \
    set -- "$MODULE/target/$MODULE.jar"; \
    if [ "$#" -ne 1 ]; then echo "expected one $MODULE jar, found: $*" >&2; exit 1; fi; \
    java -Djarmode=tools -jar "$1" extract --layers --destination /extracted

# Runtime stage: the jar's layers, least to most frequently changing, so a code change
# rebuilds only the last layers. Extracted without the launcher: lib/*.jar and APP.jar, whose manifest
# names them, run with `java -jar` by the JVM's own class loader, the form the AOT cache needs.
FROM eclipse-temurin:25-jre
ARG MODULE
ARG PORT
RUN groupadd --system --gid 10001 flashsale \
 && useradd --system --uid 10001 --gid flashsale --no-create-home --shell /usr/sbin/nologin flashsale
WORKDIR /app
COPY --from=build /extracted/dependencies/ ./
COPY --from=build /extracted/spring-boot-loader/ ./
COPY --from=build /extracted/snapshot-dependencies/ ./
COPY --from=build /extracted/application/ ./
# AOT cache (JEP 483/514/515; docs/operations.md#cold-starts): a training run that starts the
# application context and exits once it has refreshed (spring.context.exit=onRefresh: no dependency is
# contacted, none is reachable here). It runs in this stage because the cache is only valid for the JVM
# and class path that made it. Flyway off and a throw-away JWT secret, for this run only; a stale or
# mismatched cache is ignored by the JVM (it starts without it), never fatal. The entry point's arguments
# go to a file the JVM reads (java @file): the exec form of ENTRYPOINT expands no build argument.
RUN : "${PORT:?build with --build-arg PORT=8080 for order-api or PORT=8081 for order-worker}" \
 && APP_SECURITY_JWT_SECRET="aot-training-$(head -c 24 /dev/urandom | base64)" SPRING_FLYWAY_ENABLED=false \
    JAVA_TOOL_OPTIONS="-XX:+UseG1GC -Xmx512m" \
    java -XX:AOTCacheOutput="$MODULE.aot" -Dspring.context.exit=onRefresh -jar "$MODULE.jar" \
 && test -s "$MODULE.aot" \
 && printf '%s\n' "-XX:AOTCache=$MODULE.aot" -jar "$MODULE.jar" > entrypoint.args
USER 10001:10001
# Defaults for a container nobody sized: G1 chosen explicitly (below 2 CPUs or 1792 MiB the JVM would pick
# Serial), half the container's memory limit for the heap (the JVM keeps 200-310 MiB outside it, measured;
# docs/operations.md#jvm-sizing), and exit (to be restarted) on OutOfMemoryError instead of limping on. The
# Kubernetes and Compose files set the whole variable with a fixed heap.
ENV SERVER_PORT=${PORT} \
    JAVA_TOOL_OPTIONS="-XX:+UseG1GC -XX:MaxRAMPercentage=50.0 -XX:InitialRAMPercentage=50.0 -XX:+ExitOnOutOfMemoryError"
EXPOSE ${PORT}
# bash's /dev/tcp instead of curl: the JRE image ships no HTTP client. The actuator listens on
# MANAGEMENT_PORT when one is set, else on SERVER_PORT.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${MANAGEMENT_PORT:-${SERVER_PORT}} && printf 'GET /actuator/health/readiness HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -Eq '^HTTP/[0-9.]+ 200'"]
# java -XX:AOTCache=<module>.aot -jar <module>.jar
ENTRYPOINT ["java", "@entrypoint.args"]
