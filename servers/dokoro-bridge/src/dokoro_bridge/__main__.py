"""``python -m dokoro_bridge``: serve the bridge tools over stdio."""

from dokoro_bridge.server import main

if __name__ == "__main__":
    main()
