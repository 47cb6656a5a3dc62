import * as MenuPrimitive from '@radix-ui/react-dropdown-menu';
import type { ComponentProps, ReactNode } from 'react';
import styles from './dropdown-menu.module.css';

// The app's only wrapper of Radix DropdownMenu: a button that opens a list of
// items, moved through with the arrow keys, closed with Escape, focus back on
// the button.

/**
 * DropdownMenu is not modal: a modal menu hides the rest of the page from
 * assistive technology (aria-hidden) while its links stay focusable, which axe
 * reports as a serious violation; a menu closes on any outside click or focus anyway.
 */
export function DropdownMenu(props: ComponentProps<typeof MenuPrimitive.Root>) {
  return <MenuPrimitive.Root modal={false} {...props} />;
}
export const DropdownMenuTrigger = MenuPrimitive.Trigger;

/** DropdownMenuContent is the open menu, under its trigger and aligned to its end; Radix names it after the trigger. */
export function DropdownMenuContent({ children }: { children: ReactNode }) {
  return (
    <MenuPrimitive.Portal>
      <MenuPrimitive.Content className={styles.content} align="end" sideOffset={6} collisionPadding={8}>
        {children}
      </MenuPrimitive.Content>
    </MenuPrimitive.Portal>
  );
}

/** DropdownMenuItem is one entry; with asChild it renders its child (a Link) as the item. */
export function DropdownMenuItem({ className, ...props }: ComponentProps<typeof MenuPrimitive.Item>) {
  return <MenuPrimitive.Item className={[styles.item, className].filter(Boolean).join(' ')} {...props} />;
}

/** DropdownMenuLabel is a heading inside the menu, not an item. */
export function DropdownMenuLabel({ children }: { children: ReactNode }) {
  return <MenuPrimitive.Label className={styles.label}>{children}</MenuPrimitive.Label>;
}

/** DropdownMenuSeparator divides groups of items. */
export function DropdownMenuSeparator() {
  return <MenuPrimitive.Separator className={styles.separator} />;
}
