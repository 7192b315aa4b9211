"""The write operations an agent can prepare, one module each, looked up by name.

An operation's module holds its whole definition: argument keys, checks (run at prepare and
again at commit inside the write transaction), apply (through records.services, so it is
validated, versioned and audited like any write), batchability, and what it would change as
plain data for the admin. See registry.py for the shape and change.py for the change data.
"""

from workflow.operations.registry import (
    Names,
    Operation,
    all_operations,
    batch_operation_names,
    discover,
    operation_named,
    operation_names,
    parse_operation,
    register,
    unregister,
)

__all__ = [
    "Names",
    "Operation",
    "all_operations",
    "batch_operation_names",
    "operation_named",
    "operation_names",
    "parse_operation",
    "register",
    "unregister",
]

for _definition in discover(__name__, __path__):
    register(_definition)
