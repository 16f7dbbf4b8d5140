from skconsole.cli.app import main

main()
