#!/bin/sh
# The validator init container, as the meshes' own ones check it: listen on 15001, connect to 10.255.255.1:80,
# and pass only if that connection reached the listener, which happens only when the mesh's REDIRECT rule is in
# this pod's network namespace. Exits with the mesh's code otherwise (Istio 126, Linkerd 95).
#   validate.sh <exit code on failure>
code=${1:?usage: validate.sh <exit code on failure>}
for attempt in 1 2 3; do
  nc -l -p 15001 -e /bin/echo redirected &
  listener=$!
  sleep 0.2
  reply=$(nc -w 1 10.255.255.1 80 </dev/null 2>/dev/null)
  kill "$listener" 2>/dev/null
  wait "$listener" 2>/dev/null
  if [ "$reply" = redirected ]; then
    echo "validation passed: 10.255.255.1:80 reached the listener on 15001 (attempt $attempt)"
    exit 0
  fi
done
echo "validation failed: 10.255.255.1:80 did not reach the listener on 15001; is the mesh's CNI plugin running?" >&2
exit "$code"
