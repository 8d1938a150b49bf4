/*
 * stub_main.c -- the main of the layer link check (lib/layers.mk): each
 * layer's archive is linked whole, with this main, against the archives
 * of the layers below it only, so a call that goes up a layer fails to
 * link.
 */

int	main(void);

int
main(void)
{
	return 0;
}
