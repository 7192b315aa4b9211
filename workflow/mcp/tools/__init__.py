"""The tool classes: thin wrappers that parse arguments, call the workflow, wrap the envelope."""

from workflow.mcp.tools.agendas import AgendaTools
from workflow.mcp.tools.legacy import LegacyWriteTools
from workflow.mcp.tools.reads import ReadTools, SessionTools
from workflow.mcp.tools.reviews import BatchReadTools, BatchReviewTools, ReviewTools
from workflow.mcp.tools.writes import BatchWriteTools, ImportTools, WriteTools

# In tool-list order: the order clients see in tools/list.
TOOLSETS = (
    AgendaTools,
    LegacyWriteTools,
    ReadTools,
    ReviewTools,
    BatchReviewTools,
    BatchReadTools,
    SessionTools,
    WriteTools,
    BatchWriteTools,
    ImportTools,
)
