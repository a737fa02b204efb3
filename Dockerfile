FROM python:3.11-slim
WORKDIR /app
# CPU build of torch first, so sentence-transformers does not pull a CUDA build.
RUN pip install --no-cache-dir torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY pyproject.toml README.md ./
COPY pilot pilot
COPY clarifier clarifier
COPY workflows workflows
COPY cache cache
COPY app.py .
RUN pip install --no-cache-dir .
# The app runs as an unprivileged user that owns only its cache (created private, 0700). No VOLUME is
# declared: mount one explicitly (-v pilot-cache:/home/pilot/cache) if the cache should outlive the
# container, and never share it with another user: whoever can write a cache can change what pilot shows.
RUN useradd --create-home --uid 10001 pilot && install -d -m 0700 -o pilot -g pilot /home/pilot/cache
USER pilot
ENV PILOT_CACHE_DIR=/home/pilot/cache GRADIO_SERVER_NAME=0.0.0.0 LITELLM_LOCAL_MODEL_COST_MAP=True HF_HUB_OFFLINE=1
EXPOSE 7860
# Listening on 0.0.0.0 without PILOT_AUTH=user:password prints a warning at start: set a login, or publish
# the port on 127.0.0.1 only (-p 127.0.0.1:7860:7860).
HEALTHCHECK --interval=30s --timeout=5s --start-period=180s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:7860/', timeout=4)"]
CMD ["python", "app.py"]
