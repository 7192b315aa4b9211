"""The workflow's models: reviews and prepared actions (the guarded path), and agendas."""

from workflow.models.agendas import Agenda, AgendaConclusion, AgendaEvent, AgendaItem, AgendaLayer
from workflow.models.name_lists import StoredNameList
from workflow.models.read_marks import ReadMark
from workflow.models.reviews import OPEN_STATES, ActionState, PreparedAction, ReviewTicket

__all__ = [
    "OPEN_STATES",
    "ActionState",
    "Agenda",
    "AgendaConclusion",
    "AgendaEvent",
    "AgendaItem",
    "AgendaLayer",
    "PreparedAction",
    "ReadMark",
    "ReviewTicket",
    "StoredNameList",
]
