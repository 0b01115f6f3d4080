#!/bin/sh
# The app (and the CNI agent) container: idles until told to stop. As PID 1 a shell gets no default SIGTERM
# action, so the trap is what lets the kubelet stop it at once instead of after the grace period.
trap 'exit 0' TERM INT
while :; do
  sleep 1 &
  wait $!
done
