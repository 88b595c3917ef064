"""``python -m dokoro_tracking``: serve the tracking tools over stdio."""

from dokoro_tracking.server import main

if __name__ == "__main__":
    main()
