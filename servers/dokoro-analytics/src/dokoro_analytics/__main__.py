"""``python -m dokoro_analytics``: serve the analytics tools over stdio."""

from dokoro_analytics.server import main

if __name__ == "__main__":
    main()
