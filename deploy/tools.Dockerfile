# The CLIs: consumer (debugging) and runnelctl (admin and producer).
FROM scratch
COPY consumer runnelctl healthcheck /bin/
ENTRYPOINT ["/bin/consumer"]
