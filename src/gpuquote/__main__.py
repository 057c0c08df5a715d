from gpuquote.cli import main

main()
