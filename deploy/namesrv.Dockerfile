# Built by `make images` from static binaries in bin/static (no registry needed).
FROM scratch
COPY namesrv healthcheck /bin/
EXPOSE 9876
ENTRYPOINT ["/bin/namesrv"]
CMD ["--listen", "0.0.0.0:9876"]
