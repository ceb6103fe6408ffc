# Built by `make images` from static binaries in bin/static (no registry needed).
FROM scratch
COPY broker healthcheck /bin/
VOLUME /data
EXPOSE 10911
ENTRYPOINT ["/bin/broker", "--store-dir", "/data"]
