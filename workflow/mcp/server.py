"""Fit the MCP server this process serves (`sdk.global_server`) to Anchor, once, when the
workflow app is ready: tools and their list, our own tools/call path, prompts, resources, the
version, and silence for cancelled requests.
"""

from __future__ import annotations

from django.conf import settings

from workflow.mcp import calls, prompts, resources, sdk, tool_list
from workflow.mcp.instructions import install_server_instructions
from workflow.mcp.tools import TOOLSETS


def install() -> None:
    register_toolsets()
    select_tools(settings.ANCHOR_TOOLS)
    sdk.set_version(settings.ANCHOR_VERSION)
    lowlevel = sdk.lowlevel_server()
    lowlevel.call_tool(validate_input=False)(calls.call_tool)
    sdk.refuse_unknown_tools(tool_list.callable_tool, calls.unknown_tool_message)
    lowlevel.list_resources()(resources.list_resources)
    lowlevel.list_resource_templates()(resources.list_resource_templates)
    lowlevel.read_resource()(resources.read_resource)
    lowlevel.completion()(resources.complete)
    lowlevel.list_prompts()(prompts.list_prompts)
    lowlevel.get_prompt()(prompts.get_prompt)
    sdk.answer_cancellations_without_reply()


_registered: set[type] = set()


def register_toolsets(toolsets: tuple[type, ...] = TOOLSETS) -> None:
    """Register Anchor's toolsets (or these) with the served server, each once; explicit, as
    `workflow.mcp` must import before Django is set up (manage.py claims stdio from it)."""
    for toolset in toolsets:
        if toolset not in _registered:
            _registered.add(toolset)
            sdk.register_toolset(toolset)


def select_tools(selection: str) -> None:
    """Serve only the selected tools ('full', 'core' or names), and instructions naming only
    them; ImproperlyConfigured if bad."""
    tool_list.install(sdk.global_server(), selection)
    install_server_instructions(sdk.served_tool_names())
