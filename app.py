"""pilot's web app: ``python app.py`` (or ``make run`` for the offline corpus on this machine).

Settings come from ``PILOT_*`` environment variables (``PILOT_CORPUS`` for the offline corpus);
``GRADIO_SERVER_NAME`` / ``GRADIO_SERVER_PORT`` choose where it listens (default 127.0.0.1:7860).
"""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # no call home from the server either

from pilot.ui import launch  # noqa: E402

if __name__ == "__main__":
    launch()
