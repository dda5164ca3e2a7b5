"""Start the demo: ``python -m demo [--host 127.0.0.1] [--port 8050]``."""

from __future__ import annotations

import argparse

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8050


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and serve the app with uvicorn (no reload, no browser)."""
    parser = argparse.ArgumentParser(prog="python -m demo", description="二分类评价与超参数选择：交互演示（Shiny for Python）")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"绑定的地址（默认 {DEFAULT_HOST}，只接受本机访问）")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"端口（默认 {DEFAULT_PORT}）")
    args = parser.parse_args(argv)

    from shiny import run_app

    print(f"交互演示：http://{args.host}:{args.port}/  （Ctrl-C 停止）", flush=True)
    run_app("demo.app:app", host=args.host, port=args.port, launch_browser=False, reload=False, dev_mode=False, app_dir=None)


if __name__ == "__main__":
    main()
