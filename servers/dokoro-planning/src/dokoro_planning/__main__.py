"""``python -m dokoro_planning``: serve the planning tools over stdio."""

from dokoro_planning.server import main

if __name__ == "__main__":
    main()
