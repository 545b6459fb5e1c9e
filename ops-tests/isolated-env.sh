# Sourced by the ops test scripts: queue names and a mode flag of this run's own, so the stack under test
# never takes another stack's orders or flips another stack's mode on the shared local services; and a
# function that deletes those queues and exchanges afterwards.
#
#   source ops-tests/isolated-env.sh NAME
run=$1.$(date +%s)-$$
export SPRING_PROFILES_ACTIVE=${SPRING_PROFILES_ACTIVE:-local}
export APP_MESSAGING_EXCHANGE=flashsale.opstest.$run.orders
export APP_MESSAGING_QUEUE=flashsale.opstest.$run.requested
export APP_MESSAGING_RETRY_EXCHANGE=flashsale.opstest.$run.retry
export APP_MESSAGING_RETRY_QUEUE=flashsale.opstest.$run.retry
export APP_MESSAGING_DEAD_LETTER_EXCHANGE=flashsale.opstest.$run.dlx
export APP_MESSAGING_DEAD_LETTER_QUEUE=flashsale.opstest.$run.dead
export APP_MODE_REDISKEY=flashsale:opstest:$run:mode
export JAVA_OPTS=${JAVA_OPTS:--Xmx384m -XX:TieredStopAtLevel=1}
export UP_READY_TIMEOUT=${UP_READY_TIMEOUT:-240}

delete_isolated_topology() {
  python3 - "$APP_MESSAGING_QUEUE" "$APP_MESSAGING_RETRY_QUEUE" "$APP_MESSAGING_DEAD_LETTER_QUEUE" \
    "$APP_MESSAGING_EXCHANGE" "$APP_MESSAGING_RETRY_EXCHANGE" "$APP_MESSAGING_DEAD_LETTER_EXCHANGE" <<'PY' || true
import base64, os, sys, urllib.request
user = os.environ.get("RABBITMQ_USER", "flashsale")
password = os.environ.get("RABBITMQ_PASSWORD", "flashsale")
auth = base64.b64encode(f"{user}:{password}".encode()).decode()
for i, name in enumerate(sys.argv[1:]):
    kind = "queues" if i < 3 else "exchanges"
    request = urllib.request.Request(f"http://127.0.0.1:15672/api/{kind}/%2F/{name}", method="DELETE",
                                     headers={"Authorization": "Basic " + auth})
    try:
        urllib.request.urlopen(request, timeout=5)
    except Exception:
        pass
PY
}
