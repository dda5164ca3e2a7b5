"""提交 from JupyterLab: a Jupyter Server extension (:mod:`.handlers`) and the prebuilt JupyterLab extension beside it.

The JupyterLab extension (``src/index.js``, built into ``labextension/``) adds the command ``autograder:submit``,
labelled 提交, to the notebook toolbar and the command palette: it saves the notebook, asks this server to send it,
shows the progress and then the grade with a link to the feedback.  The server extension sends the saved file to
the grading service (``AUTOGRADER_URL``) with the token of the person's own JupyterHub session; the service asks the
hub whose token it is and decides the course and the assignment from its records and the file.
"""

from __future__ import annotations

from .handlers import setup_handlers

__version__ = "0.1.0"


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "@autograder/lab-submit"}]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "autograder_lab"}]


def _load_jupyter_server_extension(server_app) -> None:
    setup_handlers(server_app.web_app)
    server_app.log.info("autograder_lab: 提交 goes to %s", server_app.web_app.settings["autograder_url"] or "(AUTOGRADER_URL not set)")
