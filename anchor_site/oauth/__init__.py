"""Team mode's OAuth 2.1 authorization server and protected-resource metadata.

django-oauth-toolkit does the protocol (authorization code, PKCE, token rotation, dynamic client
registration, RFC 8414 and RFC 9728 documents, RFC 8707 resource indicators on grants and
tokens); this package configures it for the MCP authorization spec and adds what it lacks: the
one resource every token must be bound to, the consent page naming the workspaces, a sign-in
page for people who are not admin staff, and the checks /mcp makes on a presented token.
"""
