# The course's grading service in a JupyterHub (tested with JupyterHub 6.1.1; docs/jupyterhub.md walks through it).
#
# What it sets up:
#   * the service "grader" as an external JupyterHub service: an OAuth client of the hub (client id
#     "service-grader", secret = its api_token), so that students sign in to a course without an access code;
#   * every user may use it (the scope access:services!service=grader, added to the hub's "user" role);
#   * each user's server passes that scope on to the tokens it holds for the browser (the JupyterLab 提交 button
#     sends the token of the person's own session), and knows the service's address (AUTOGRADER_URL).
#
# The service does not run behind the hub's proxy: it keeps its own address (https://grader.example.edu), so the
# students' servers never share its origin.  Two values come from the environment of the hub process:
#   GRADER_URL        the service's public address (autograder serve --public-url), default below
#   GRADER_HUB_TOKEN  a random secret (openssl rand -hex 32), also in the service's DATA/jupyterhub.token (mode 0600)
# Everything else - the authenticator, the spawner, the image with JupyterLab, nbgitpuller and autograder-lab -
# stays as your hub has it: add the lines below to your own jupyterhub_config.py.
import os

c = get_config()  # noqa: F821 - provided by JupyterHub when it loads this file

GRADER_NAME = "grader"
GRADER_URL = os.environ.get("GRADER_URL", "https://grader.example.edu").rstrip("/")
GRADER_SCOPE = f"access:services!service={GRADER_NAME}"

c.JupyterHub.services = [
    {
        "name": GRADER_NAME,
        "api_token": os.environ["GRADER_HUB_TOKEN"],  # the OAuth client secret of service-grader
        "oauth_redirect_uri": f"{GRADER_URL}/jupyterhub/callback",  # where the hub sends the browser back
        "oauth_no_confirm": True,  # the course's own service: no "authorize this application?" page
        "oauth_client_allowed_scopes": [],  # its tokens identify the user and reach the service, nothing more
        "display": False,  # not listed under Services (it is not proxied by the hub)
    },
]

# Who may use the service: every user of the hub.  (A hub shared with other courses can grant the scope to a group
# instead: {"name": "grader-users", "scopes": [GRADER_SCOPE], "groups": ["students-2026"]}.)  What a person is in a
# course - student, TA, instructor, nobody - is decided by the course's own roster, never by hub groups or roles.
c.JupyterHub.load_roles = [
    {"name": "user", "scopes": ["self", GRADER_SCOPE]},
]

# The tokens a user's server holds for the browser (its OAuth client) may carry the scope, so that 提交 in
# JupyterLab can send the person's own session token; the service refuses tokens without it.
c.Spawner.oauth_client_allowed_scopes = [GRADER_SCOPE]

# Where the 提交 button sends notebooks (read by the autograder-lab server extension).
c.Spawner.environment = {"AUTOGRADER_URL": GRADER_URL}

# Optional (JupyterHub 6+): PKCE on every OAuth flow of the hub (the service always sends a code challenge).
c.JupyterHub.oauth_require_pkce = True
