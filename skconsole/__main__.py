from skconsole.cli import main

main()
