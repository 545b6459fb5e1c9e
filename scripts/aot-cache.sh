#!/usr/bin/env bash
# Builds each application's AOT cache (JDK 25, JEP 483/515) for scripts/up.sh, as the images do at build
# time (Dockerfile): the jar extracted to <module>/target/aot/<name>/, then one training run that
# refreshes the Spring context and exits, recording the classes it loaded and linked. With the cache the
# API is ready in ~9 s instead of ~20 s on this 2-core box (docs/decisions/0017-aot-cache-for-local-stacks.md).
# Skips a module whose cache is newer than its jar. The training needs the local services (services.sh up).
#
#   scripts/aot-cache.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/java-env.sh
# The cache holds for the JVM options it was trained with; up.sh starts the apps with the same ones.
opts=${JAVA_OPTS:--XX:+UseG1GC -Xms512m -Xmx512m}

for name in order-api order-worker; do
  jar=$name/target/$name.jar
  dir=$name/target/aot/$name
  [ -f "$jar" ] || { echo "[aot-cache] $jar is missing: build first (scripts/mvn -B -q -DskipTests package)" >&2; exit 1; }
  if [ -f "$dir/$name.aot" ] && [ "$dir/$name.aot" -nt "$jar" ]; then
    echo "[aot-cache] $name: up to date"
    continue
  fi
  rm -rf "$dir"
  java -Djarmode=tools -jar "$jar" extract --destination "$dir" >/dev/null
  echo "[aot-cache] $name: training"
  # The class path must read the same at run time: absolute, as up.sh gives it.
  # shellcheck disable=SC2086
  (cd "$dir" && SPRING_PROFILES_ACTIVE=${SPRING_PROFILES_ACTIVE:-local} SERVER_PORT=0 \
    java $opts -XX:AOTCacheOutput="$name.aot" -Dspring.context.exit=onRefresh -jar "$root/$dir/$name.jar" \
    >training.log 2>&1) ||
    { echo "[aot-cache] $name: the training run failed; see $dir/training.log" >&2; rm -f "$dir/$name.aot"; exit 1; }
  [ -s "$dir/$name.aot" ] || { echo "[aot-cache] $name: no cache written; see $dir/training.log" >&2; exit 1; }
  echo "[aot-cache] $name: $(du -h "$dir/$name.aot" | cut -f1)"
done
