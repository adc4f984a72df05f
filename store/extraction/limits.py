"""What bounds one extraction run (`Settings.extraction_limits`): `Limits`, defined beside the settings that
hold it (`store.settings.ExtractionLimits`), so the settings need nothing of this package."""

from __future__ import annotations

from store.settings import ExtractionLimits as Limits

__all__ = ["Limits"]
