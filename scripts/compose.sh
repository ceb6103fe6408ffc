#!/usr/bin/env bash
# Dev cluster under Docker without a registry: static binaries built on the
# host, images FROM scratch, then docker compose.
#
#   scripts/compose.sh images   # build bin/static/* and the runnel/* images
#   scripts/compose.sh up       # images, then start and wait until every service is healthy
#                               # (the web console then answers on http://127.0.0.1:8080/)
#   scripts/compose.sh start    # start and wait, with the images as they are
#   scripts/compose.sh wait     # wait until every service is healthy
#   scripts/compose.sh down     # stop and remove containers and volumes
#   scripts/compose.sh runnelctl ARGS...   # runnelctl on the compose network
#   scripts/compose.sh consumer ARGS...    # the debugging consumer there
#
# up checks that the published ports are free before it builds anything,
# and when it fails on a project that was not running, it removes what it
# created (containers, network, volumes).
#
# COMPOSE_PROFILES=group also starts the replicated group broker-g (three
# nodes; up waits for them too).
#
# COMPOSE_PROJECT_NAME picks the project (default runnel); RUNNEL_NET,
# RUNNEL_ADVERTISE_HOST and the RUNNEL_*_PORT variables are described in
# docker-compose.yml.
set -euo pipefail
cd "$(dirname "$0")/.."

project="${COMPOSE_PROJECT_NAME:-runnel}"

# need_compose picks the compose tool; commands call it only once they
# are past the checks that need no Docker (the port check), so a busy
# port is reported at once even where Docker is missing.
need_compose() {
	if docker compose version >/dev/null 2>&1; then
		compose=(docker compose -p "$project")
	elif command -v docker-compose >/dev/null; then
		compose=(docker-compose -p "$project")
	else
		echo "compose: neither 'docker compose' nor 'docker-compose' is installed" >&2
		exit 1
	fi
}

# The brokers advertise the compose network's gateway. docker-compose.yml
# cannot derive one variable from another, so a moved network (RUNNEL_NET)
# moves the advertised address here.
if [[ -n "${RUNNEL_NET:-}" && -z "${RUNNEL_ADVERTISE_HOST:-}" ]]; then
	export RUNNEL_ADVERTISE_HOST="$RUNNEL_NET.1"
fi
if [[ "${RUNNEL_ADVERTISE_HOST:-}" == 127.* ]]; then
	echo "compose: RUNNEL_ADVERTISE_HOST=$RUNNEL_ADVERTISE_HOST: every port is already published on 127.0.0.1;" \
		"give an address containers can reach too (unset it for the network's gateway)" >&2
	exit 2
fi

# The services up waits for, and the ports it publishes: the group
# profile (COMPOSE_PROFILES=group, compose's own variable) adds its three
# nodes.
services=(namesrv broker-a broker-b console)
# Each port as VARIABLE=default: check_ports names the variable that moves it.
ports=(RUNNEL_NAMESRV_PORT=9876 RUNNEL_BROKER_A_PORT=10911 RUNNEL_BROKER_B_PORT=10921
	RUNNEL_NAMESRV_METRICS_PORT=5558 RUNNEL_BROKER_A_METRICS_PORT=5557 RUNNEL_BROKER_B_METRICS_PORT=5567
	RUNNEL_CONSOLE_PORT=8080 RUNNEL_BROKER_A_GRPC_PORT=8081 RUNNEL_BROKER_B_GRPC_PORT=8091)
if [[ ",${COMPOSE_PROFILES:-}," == *,group,* ]]; then
	services+=(broker-g0 broker-g1 broker-g2)
	ports+=(RUNNEL_BROKER_G0_PORT=10931 RUNNEL_BROKER_G1_PORT=10941 RUNNEL_BROKER_G2_PORT=10951
		RUNNEL_BROKER_G0_GRPC_PORT=8101 RUNNEL_BROKER_G1_GRPC_PORT=8111 RUNNEL_BROKER_G2_GRPC_PORT=8121)
fi

images() {
	mkdir -p bin/static
	CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags '-s -w' -o bin/static/ \
		./cmd/namesrv ./cmd/broker ./cmd/consumer ./cmd/runnelctl ./cmd/healthcheck ./cmd/runnel
	for role in namesrv broker tools console; do
		if ! log=$(docker build -q -f "deploy/$role.Dockerfile" -t "runnel/$role:dev" bin/static 2>&1); then
			echo "$log" >&2
			exit 1
		fi
	done
	docker images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep '^runnel/' || true
}

# wait_healthy asks the engine directly, one `docker ps` per round:
# docker-compose v1 takes about half a second per call, which would
# dominate the time to healthy.
wait_healthy() {
	local deadline=$((SECONDS + ${COMPOSE_WAIT:-120})) states all svc
	while ((SECONDS < deadline)); do
		states=$(docker ps -a --filter "label=com.docker.compose.project=$project" \
			--format '{{.Label "com.docker.compose.service"}}={{.Status}}')
		all=1
		for svc in "${services[@]}"; do
			grep -q "^$svc=Up .*(healthy)" <<<"$states" || all=0
		done
		if ((all)); then
			echo "compose: all services healthy"
			return 0
		fi
		sleep 0.2
	done
	echo "compose: services not healthy in time" >&2
	"${compose[@]}" ps >&2
	"${compose[@]}" logs --tail 50 >&2
	return 1
}

# running reports whether the project has containers already (never,
# where there is no Docker).
running() {
	command -v docker >/dev/null || return 1
	[[ -n "$(docker ps -aq --filter "label=com.docker.compose.project=$project" 2>/dev/null)" ]]
}

# check_ports fails when a port up would publish is taken by something
# else (a port of this project's own containers is fine: up is then a
# no-op for them). It names each port with the variable that moves it.
check_ports() {
	running && return 0
	local entry var port busy=()
	for entry in "${ports[@]}"; do
		var=${entry%%=*}
		port=${!var:-${entry#*=}}
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			busy+=("$port ($var)")
		fi
	done
	if ((${#busy[@]})); then
		echo "compose: port(s) already in use on 127.0.0.1: ${busy[*]}. Nothing was built or started." >&2
		echo "compose: stop what holds them (a runnel dev? 'ss -ltnp' shows it), or move them, e.g." \
			"RUNNEL_NAMESRV_PORT=19876 RUNNEL_BROKER_A_PORT=20911 make compose-up" >&2
		exit 1
	fi
}

start() {
	local t0 fresh=1
	running && fresh=0
	t0=$(date +%s%N)
	if ! "${compose[@]}" up -d || ! wait_healthy; then
		if ((fresh)); then
			echo "compose: removing what this up created" >&2
			"${compose[@]}" down -v --remove-orphans >&2 || true
		fi
		exit 1
	fi
	echo "compose: up to healthy in $((($(date +%s%N) - t0) / 1000000)) ms"
}

case "${1:-}" in
images)
	need_compose
	images
	;;
up)
	check_ports
	need_compose
	images
	start
	;;
start)
	check_ports
	need_compose
	start
	;;
runnelctl | consumer)
	profile=tools
	[[ "$1" == consumer ]] && profile=consumer
	svc=$1
	shift
	need_compose
	exec "${compose[@]}" --profile "$profile" run --rm "$svc" "$@"
	;;
wait)
	need_compose
	wait_healthy
	;;
down)
	need_compose
	"${compose[@]}" --profile group down -v --remove-orphans # the group too, whatever COMPOSE_PROFILES says
	;;
*)
	echo "usage: $0 images|up|start|wait|down|runnelctl ARGS|consumer ARGS" >&2
	exit 2
	;;
esac
