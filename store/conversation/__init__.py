"""One conversation model for every stored message: `canonical(record)` reads any message (the store's own
shapes, or a framework adapter's dialect) as a `CanonicalMessage` of ordered `Part`s."""

from store.conversation.dialects import canonical
from store.conversation.model import CanonicalMessage, Part, PartType, Role

__all__ = ["CanonicalMessage", "Part", "PartType", "Role", "canonical"]
