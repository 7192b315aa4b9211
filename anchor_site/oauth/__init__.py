"""Team mode's OAuth 2.1 authorization server and protected-resource metadata: django-oauth-toolkit
does the protocol, configured and extended here for the MCP authorization spec."""
