# The web console: `runnel console` (the all-in-one binary; only its
# console command runs here). Built by `make images` from static binaries in
# bin/static (no registry needed).
FROM scratch
COPY runnel /bin/
EXPOSE 8080
ENTRYPOINT ["/bin/runnel", "console"]
CMD ["--namesrv", "namesrv:9876", "--listen", "0.0.0.0:8080"]
