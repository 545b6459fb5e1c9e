# Sourced by the project's scripts: selects JDK 25 (the build refuses any other).
# JAVA_HOME wins when it is a JDK 25; otherwise the newest /usr/lib/jvm/temurin-25* is used.
java_major() { "$1/bin/java" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}'; }

if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ] && [ "$(java_major "$JAVA_HOME")" = 25 ]; then
  :
else
  candidate=$(ls -d /usr/lib/jvm/temurin-25* 2>/dev/null | sort -V | tail -n1)
  if [ -z "$candidate" ] || [ ! -x "$candidate/bin/java" ]; then
    echo "ERROR: JDK 25 not found. Set JAVA_HOME to a JDK 25, or install Temurin 25 (apt-get install temurin-25-jdk from the Adoptium repository) so that /usr/lib/jvm/temurin-25* exists." >&2
    exit 1
  fi
  JAVA_HOME=$candidate
fi
export JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"
