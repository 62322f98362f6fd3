"""Multi-card (pld) tests reuse the frontend tests' located-error helpers."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "frontend"))
