"""One conversation model for every stored message: `canonical(record)` reads any message (the store's own
shapes, or a framework adapter's dialect) as a `CanonicalMessage` of ordered `Part`s."""

from store.conversation.dialects import canonical, viewed
from store.conversation.model import VIEW_FIELD, CanonicalMessage, Part, PartType, Role, ViewedMessage

__all__ = ["VIEW_FIELD", "CanonicalMessage", "Part", "PartType", "Role", "ViewedMessage", "canonical", "viewed"]
