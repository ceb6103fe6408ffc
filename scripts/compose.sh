#!/usr/bin/env bash
# Dev cluster under Docker without a registry: static binaries built on the
# host, images FROM scratch, then docker compose.
#
#   scripts/compose.sh images   # build bin/static/* and the runnel/* images
#   scripts/compose.sh up       # images, then start and wait until every service is healthy
#   scripts/compose.sh down     # stop and remove containers and volumes
set -euo pipefail
cd "$(dirname "$0")/.."

project="${COMPOSE_PROJECT_NAME:-runnel}"
if docker compose version >/dev/null 2>&1; then
	compose=(docker compose -p "$project")
elif command -v docker-compose >/dev/null; then
	compose=(docker-compose -p "$project")
else
	echo "compose: neither 'docker compose' nor 'docker-compose' is installed" >&2
	exit 1
fi

images() {
	mkdir -p bin/static
	CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags '-s -w' -o bin/static/ \
		./cmd/namesrv ./cmd/broker ./cmd/consumer ./cmd/runnelctl ./cmd/healthcheck
	for role in namesrv broker tools; do
		if ! log=$(docker build -q -f "deploy/$role.Dockerfile" -t "runnel/$role:dev" bin/static 2>&1); then
			echo "$log" >&2
			exit 1
		fi
	done
	docker images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep '^runnel/' || true
}

wait_healthy() {
	local deadline=$((SECONDS + ${COMPOSE_WAIT:-120}))
	while ((SECONDS < deadline)); do
		local all=1
		for svc in namesrv broker-a broker-b; do
			id=$("${compose[@]}" ps -q "$svc")
			status=$(docker inspect --format '{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' "$id" 2>/dev/null || echo missing)
			[[ "$status" == healthy ]] || all=0
		done
		if ((all)); then
			echo "compose: all services healthy"
			return 0
		fi
		sleep 0.5
	done
	echo "compose: services not healthy in time" >&2
	"${compose[@]}" ps >&2
	"${compose[@]}" logs --tail 50 >&2
	return 1
}

case "${1:-}" in
images) images ;;
up)
	images
	start=$SECONDS
	"${compose[@]}" up -d
	wait_healthy
	echo "compose: up to healthy in $((SECONDS - start))s"
	;;
wait) wait_healthy ;;
down) "${compose[@]}" down -v ;;
*)
	echo "usage: $0 images|up|wait|down" >&2
	exit 2
	;;
esac
