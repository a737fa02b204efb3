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
ENV PILOT_CACHE_DIR=/cache GRADIO_SERVER_NAME=0.0.0.0 LITELLM_LOCAL_MODEL_COST_MAP=True HF_HUB_OFFLINE=1
VOLUME /cache
EXPOSE 7860
CMD ["python", "app.py"]
