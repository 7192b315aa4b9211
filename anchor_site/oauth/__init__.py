"""Team mode's OAuth 2.1 authorization server and protected-resource metadata.

django-oauth-toolkit does the protocol; this package configures it for the MCP authorization
spec and adds the one resource every token is bound to, a consent page naming the workspaces, a
sign-in page for people who are not staff, and the checks /mcp makes on a presented token.
"""
