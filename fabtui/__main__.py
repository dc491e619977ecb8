"""`python -m fabtui` runs the command line, exactly like the `fabtui` script."""

from fabtui.cli import main

if __name__ == "__main__":
    main()
