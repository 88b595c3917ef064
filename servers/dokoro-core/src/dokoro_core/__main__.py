"""``python -m dokoro_core``: serve the core tools over stdio."""

from dokoro_core.server import main

if __name__ == "__main__":
    main()
