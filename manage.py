#!/usr/bin/env python
"""Django's command-line utility for Anchor."""

import os
import sys


def main() -> None:
    serving_stdio = sys.argv[1:2] == ["mcp_serve"]
    # The stdio server has settings of its own, without the HTTP, OAuth and admin apps.
    default_settings = "anchor_site.settings_stdio" if serving_stdio else "anchor_site.settings"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", default_settings)
    if serving_stdio and not {"-h", "--help"} & set(sys.argv):
        # Start-up allocates hundreds of thousands of long-lived objects (modules, classes, the
        # tool schemas) and little garbage: the cyclic collector would walk them again and again,
        # 15 % of the start measured. mcp_serve turns it back on, with them frozen, once ready.
        import gc

        gc.disable()
        # stdout is the MCP protocol stream: claim it before settings, apps or libraries load,
        # so nothing they print at import or in a ready() hook can reach the client.
        from workflow.mcp.stdio import claim_stdio_for_protocol, exit_quietly_on_sigterm

        exit_quietly_on_sigterm()
        claim_stdio_for_protocol()

    import django
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        # Load settings and start the apps here, so a bad environment variable is one clear
        # line naming it, not a traceback (or Django's "Unknown command") in a client's log.
        django.setup()
    except ImproperlyConfigured as exc:
        sys.exit(f"Anchor configuration error: {exc}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
